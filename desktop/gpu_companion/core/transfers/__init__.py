"""Resumable, verified transfers: the job, the per-host queue, the engine that picks rsync or SFTP,
and the remote folder browser.
"""
