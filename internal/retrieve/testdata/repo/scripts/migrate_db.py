"""Apply the SQL migrations in migrations/ to the database, in order."""
import os
import sqlite3


def applied_versions(conn):
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY)")
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def apply_migration(conn, version, sql):
    with conn:
        conn.executescript(sql)
        conn.execute("INSERT INTO schema_migrations (version) VALUES (?)", (version,))


def migrate(db_path, folder="migrations"):
    conn = sqlite3.connect(db_path)
    done = applied_versions(conn)
    for name in sorted(os.listdir(folder)):
        version = name.split("_")[0]
        if version not in done:
            with open(os.path.join(folder, name)) as f:
                apply_migration(conn, version, f.read())


if __name__ == "__main__":
    migrate(os.environ.get("DATABASE_PATH", "app.db"))
