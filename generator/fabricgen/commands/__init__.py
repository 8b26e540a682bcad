"""One module per subcommand; each exposes `run(**kwargs) -> int` and never sees argparse."""
