from fabricgen.console import run

run()
