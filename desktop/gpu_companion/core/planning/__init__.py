"""Planning a rental: the GPU catalogue, model shapes, VRAM and speed estimates, and billing
advice.
"""
