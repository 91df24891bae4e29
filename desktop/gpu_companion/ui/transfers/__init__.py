"""The Transfers page: the per-host queue, new-transfer dialogs and the remote folder picker."""
