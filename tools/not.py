"""lit's `not`: succeeds when the command fails (exit code 1..127, not a crash)."""
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
sys.exit(0 if 0 < rc < 128 else 1)
