"""What every feature shares: user-facing errors, the injected clock, listener lists, the message
notifier, the app's paths, field validation and import-cost helpers.
"""
