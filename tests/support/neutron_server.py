"""Neutron's API as the tests run it: `.neutron/bin/python neutron_server.py DIRECTORY`, in the
environment `scripts/setup.sh --test` makes (neutron 28.0.1). Not imported by the tests: they start
it as a program (`support.neutron_cloud.running`).

DIRECTORY holds `neutron.conf` (the ML2/OVN driver pointed at the lab's NB and SB, its database,
no auth); this program

- makes the database's tables as Neutron's own unit tests do
  (`neutron.db.migration.models.head.get_metadata().create_all`), then runs the one migration
  that also writes rows, `c33da356b165_security_group_default_rules` (the template rules every
  project's `default` security group is made from), with alembic, as `neutron-db-manage` would;
- loads the API as upstream's WSGI entry point does (`neutron.wsgi.api`: `boot_server(api_server)`,
  which also publishes the process events on which the OVN driver creates `neutron_pg_drop`);
- serves it with the standard library's WSGI server on 127.0.0.1 and a free port, which it prints
  as `serving PORT` once it answers.
"""

import configparser
import importlib.util
import os
import sys
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, make_server

DEFAULT_RULES = "alembic_migrations/versions/2023.2/expand/c33da356b165_security_group_default_rules.py"


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _database(url: str) -> None:
    import neutron.db.migration as migration
    import sqlalchemy
    from alembic.migration import MigrationContext
    from alembic.operations import Operations
    from neutron.db.migration.models import head

    engine = sqlalchemy.create_engine(url)
    metadata = head.get_metadata()
    metadata.create_all(engine)
    spec = importlib.util.spec_from_file_location("default_rules", Path(migration.__file__).parent / DEFAULT_RULES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with engine.begin() as connection:
        metadata.tables[module.table_name].drop(connection)  # the migration makes it, and fills it
        with Operations.context(MigrationContext.configure(connection)):
            module.upgrade()


def main() -> None:
    directory = Path(sys.argv[1])
    os.environ["OS_NEUTRON_CONFIG_FILES"] = str(directory / "neutron.conf")
    del sys.argv[1:]  # Neutron parses the command line as its own options
    conf = configparser.ConfigParser(interpolation=None)
    conf.read(directory / "neutron.conf")
    _database(conf["database"]["connection"])
    from neutron.wsgi import api

    server = make_server("127.0.0.1", 0, api.application, handler_class=_Quiet)
    print(f"serving {server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
