"""Entry script of the bundle: the same `gpu-companion` command as the installed package."""

import multiprocessing

from gpu_companion.cli import main

if __name__ == "__main__":
    # a process the app starts (the ledger import's file reader) runs its own code, not the app
    multiprocessing.freeze_support()
    raise SystemExit(main())
