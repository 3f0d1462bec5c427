"""What ``import trio`` finds in the processes the tests start.

trio is in the test environment only because the browser tests' selenium
needs it; no extra of elelem brings it. httpcore2 imports trio whenever it
is installed (about a quarter of an ``elelem`` command's start), so a
process the tests start would pay what a user's never does. The tests put
this folder first on those processes' ``PYTHONPATH`` (``conftest.py``,
``cli_helpers.base_env``): trio is then missing there, as in a user's
install, and httpcore2 goes on without it as it does on any machine
without trio.
"""

raise ImportError("trio is not installed for the processes the tests start (tests/user_site)")
