"""Grow the scale profile's cloud to TARGET instances by copying the rows of the servers nova really built.

Every copy of a server gets a new UUID and is written consistently wherever nova and placement keep a server:
  cell databases (cell1 and cell0): instances, instance_extra, instance_info_caches, instance_system_metadata,
      instance_metadata, block_device_mapping (a new BDM uuid), instance_faults, instance_actions and their
      events, tags;
  nova_api: instance_mappings (same cell as the original), request_specs (the spec's UUID replaced);
  placement: consumers and allocations (same provider, resources, project and user as the original).
The copies keep their original's host, flavor, status, task state and fault; names get a `-cN` suffix.
Run with the test cloud's venv (pymysql). Idempotent: copies already made count towards TARGET.

usage: clone.py TARGET SOCKET PREFIX      (PREFIX: the profile's database name prefix, e.g. stacktop_scale_)
"""

from __future__ import annotations

import sys
import time

import pymysql

# per cell database: table -> columns written from the copy's mapping (everything else is copied as is)
INSTANCE_TABLES = ("instance_extra", "instance_info_caches", "instance_system_metadata", "instance_metadata",
                   "block_device_mapping", "instance_faults", "tags")
MAP = "stacktop_clone_map"


def columns(cur: pymysql.cursors.Cursor, db: str, table: str) -> list[str]:
    cur.execute("SELECT column_name, extra FROM information_schema.columns WHERE table_schema=%s AND "
                "table_name=%s ORDER BY ordinal_position", (db, table))
    return [name for name, extra in cur.fetchall() if "auto_increment" not in extra]


def copy_rows(cur: pymysql.cursors.Cursor, db: str, table: str, key: str, cell: str,
              replace: dict[str, str], source: str | None = None) -> int:
    """INSERT INTO db.table the rows of every mapped original (joined on `key` = map.src) with `replace`
    expressions for some columns (`m.` is the map row, `t.` the original row)."""
    cols = columns(cur, db, table)
    select = ", ".join(replace.get(c, f"t.`{c}`") for c in cols)
    names = ", ".join(f"`{c}`" for c in cols)
    sql = (f"INSERT INTO `{db}`.`{table}` ({names}) SELECT {select} FROM `{source or db}`.`{table}` t "
           f"JOIN `{cell}`.`{MAP}` m ON t.`{key}` = m.src WHERE m.done = 0")
    return cur.execute(sql)


def grow_cell(conn: pymysql.Connection, cell: str, api: str, placement: str, need: int) -> int:
    """Copy the cell's live originals until `need` copies exist; return how many were made now."""
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE IF NOT EXISTS `{cell}`.`{MAP}` (src CHAR(36) NOT NULL, k INT NOT NULL, "
                "uuid CHAR(36) NOT NULL PRIMARY KEY, done TINYINT NOT NULL DEFAULT 0)")
    cur.execute(f"SELECT COUNT(*) FROM `{cell}`.`{MAP}`")
    have = cur.fetchone()[0]
    if need <= have:
        return 0
    cur.execute(f"SELECT COUNT(*) FROM `{cell}`.instances WHERE deleted = 0 AND uuid NOT IN "
                f"(SELECT uuid FROM `{cell}`.`{MAP}`)")
    originals = cur.fetchone()[0]
    if originals == 0:
        return 0
    # copy k of the r-th original (0-based, by id) exists when (k - 1) * originals + r < need
    kmax = -(-need // originals)
    cur.execute(f"INSERT INTO `{cell}`.`{MAP}` (src, k, uuid) SELECT o.uuid, s.seq, UUID() FROM "
                f"(SELECT uuid, ROW_NUMBER() OVER (ORDER BY id) - 1 AS r FROM `{cell}`.instances WHERE deleted = 0 "
                f"AND uuid NOT IN (SELECT uuid FROM `{cell}`.`{MAP}`)) o JOIN `{cell}`.seq_1_to_{kmax} s "
                f"WHERE (s.seq - 1) * {originals} + o.r < {need} "
                f"AND NOT EXISTS (SELECT 1 FROM `{cell}`.`{MAP}` x WHERE x.src = o.uuid AND x.k = s.seq)")
    made = cur.rowcount
    suffix = "CONCAT(t.`{c}`, '-c', m.k)"
    copy_rows(cur, cell, "instances", "uuid", cell, {
        "uuid": "m.uuid", "display_name": suffix.format(c="display_name"),
        "hostname": suffix.format(c="hostname")})
    for table in INSTANCE_TABLES:
        replace = {"instance_uuid": "m.uuid"}
        if table == "block_device_mapping":
            replace["uuid"] = "UUID()"
        if table == "tags":
            replace = {"resource_id": "m.uuid"}
            copy_rows(cur, cell, table, "resource_id", cell, replace)
            continue
        copy_rows(cur, cell, table, "instance_uuid", cell, replace)
    copy_rows(cur, cell, "instance_actions", "instance_uuid", cell, {"instance_uuid": "m.uuid"})
    ev_cols = columns(cur, cell, "instance_actions_events")
    select = ", ".join("an.id" if c == "action_id" else f"e.`{c}`" for c in ev_cols)
    cur.execute(f"INSERT INTO `{cell}`.instance_actions_events ({', '.join(f'`{c}`' for c in ev_cols)}) "
                f"SELECT {select} FROM `{cell}`.instance_actions_events e "
                f"JOIN `{cell}`.instance_actions a ON e.action_id = a.id "
                f"JOIN `{cell}`.`{MAP}` m ON a.instance_uuid = m.src AND m.done = 0 "
                f"JOIN `{cell}`.instance_actions an ON an.instance_uuid = m.uuid AND an.request_id = a.request_id "
                f"AND an.action = a.action")
    copy_rows(cur, api, "instance_mappings", "instance_uuid", cell, {"instance_uuid": "m.uuid"})
    copy_rows(cur, api, "request_specs", "instance_uuid", cell, {
        "instance_uuid": "m.uuid", "spec": "REPLACE(t.spec, m.src, m.uuid)"})
    copy_rows(cur, placement, "consumers", "uuid", cell, {"uuid": "m.uuid"})
    copy_rows(cur, placement, "allocations", "consumer_id", cell, {"consumer_id": "m.uuid"})
    cur.execute(f"UPDATE `{cell}`.`{MAP}` SET done = 1 WHERE done = 0")
    conn.commit()
    return made


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    target, sock, prefix = int(argv[0]), argv[1], argv[2]
    t0 = time.monotonic()
    conn = pymysql.connect(unix_socket=sock, user="root", autocommit=False)
    cur = conn.cursor()
    cells = {c: 0 for c in (f"{prefix}nova", f"{prefix}nova_cell0")}
    for cell in cells:
        cur.execute(f"SELECT COUNT(*) FROM `{cell}`.instances WHERE deleted = 0")
        cells[cell] = cur.fetchone()[0]
    total = sum(cells.values())
    if total == 0:
        print("clone: no server to copy (boot some first)", file=sys.stderr)
        return 1
    made = 0
    if target > total:
        # each cell grows in proportion to the servers it holds (cell0: the ones no host could take)
        need_total = target - total
        cell0 = f"{prefix}nova_cell0"
        for cell, n in cells.items():
            share = need_total * n // total if cell == cell0 else need_total - need_total * cells[cell0] // total
            made += grow_cell(conn, cell, f"{prefix}nova_api", f"{prefix}placement", share)
    for cell in cells:
        cur.execute(f"SELECT COUNT(*) FROM `{cell}`.instances WHERE deleted = 0")
        cells[cell] = cur.fetchone()[0]
    print(f"clone: {made} copies made in {time.monotonic() - t0:.1f} s; instances: "
          + ", ".join(f"{c} {n}" for c, n in cells.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
