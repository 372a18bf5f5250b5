# SPDX-License-Identifier: Apache-2.0
"""A scratch PYPTO_OUTPUT_DIR for the measuring tools: the caller's when set, else a temporary
folder removed at exit once the pending SIM reports are written (so repeated runs leave
nothing behind in /tmp)."""
import atexit
import os
import shutil
import tempfile


def scratch_output_dir(prefix: str) -> str:
    """Sets PYPTO_OUTPUT_DIR unless the caller set it; returns the folder in use."""
    if os.environ.get("PYPTO_OUTPUT_DIR"):
        return os.environ["PYPTO_OUTPUT_DIR"]
    folder = tempfile.mkdtemp(prefix=prefix)
    os.environ["PYPTO_OUTPUT_DIR"] = folder

    def remove():
        import pypto.sim  # the reports still pending are written into the folder first
        try:
            pypto.sim.wait_reports()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)  # runs before pypto's own exit hook (atexit is last in, first out)
    return folder
