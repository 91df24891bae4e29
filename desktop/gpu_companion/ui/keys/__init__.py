"""The Keys page: one key per platform, generate, import, rotate, export, load into an agent."""
