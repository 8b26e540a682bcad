"""Files read and written safely, which every stage that touches a file shares.

- `regular`: reading a file that must be a regular file, without blocking on a FIFO or a device
  and within a size limit;
- `held_signals`: holding SIGINT, SIGTERM and SIGHUP while a temporary file exists, so that an
  interruption never leaves one behind.

May import: the shared `errors`, `exit_codes`, `diagnostics`.
"""
