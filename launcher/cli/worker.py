"""Imported by the forkserver of ``launcher simulate --jobs N`` only, never by the CLI.

Ctrl-C reaches the whole process group; the parent alone answers it (it stops the pool and
exits 130). The forkserver imports this module before it forks any worker, and a worker
keeps the SIGINT disposition the server had then, so no worker runs a moment with Python's
default handler, whose KeyboardInterrupt prints a traceback from inside the pool's queue.
(The pool's initializer ignores SIGINT too, for the spawn method.)
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
