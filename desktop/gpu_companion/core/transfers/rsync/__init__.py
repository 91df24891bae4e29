"""rsync as the transfer engine: argv and run, streaming progress, version capabilities and error
messages.
"""
