"""Reads a flameox corpus export with Apache Spark in local mode, as a team's
Spark job would (spark.read.parquet over a table directory: Hive partitions
discovered from workspace_id=/date= names, mergeSchema for newer minors),
and prints what the Go test compares with flameox's own queries, as JSON:
per workspace, per table.

usage: spark_read.py DIR WORKSPACE_ID[,WORKSPACE_ID...] TABLE...
"""
import json
import sys

from pyspark.sql import SparkSession, functions as F

root, workspaces, tables = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
spark = (SparkSession.builder.master("local[2]").appName("flameox-export-check")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
out = {ws: {} for ws in workspaces}
for table in tables:
    df = spark.read.option("mergeSchema", "true").parquet(root + "/" + table)
    fields = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    first = [c for c in df.columns if c not in (
        "schema_version", "evidence_generation_id", "published_at", "extractor_name",
        "extractor_version", "workspace_id", "date")][0]
    for ws in workspaces:
        mine = df.where(F.col("workspace_id") == ws)
        got = {
            "rows": mine.count(),
            "column": first,
            "sample": sorted(str(r[0]) for r in mine.select(F.col(first).cast("string")).collect()),
            "partition_types": {"workspace_id": fields.get("workspace_id"), "date": fields.get("date")},
            "extra_note": mine.where(F.col("extra_note").isNotNull()).count() if "extra_note" in df.columns else None,
        }
        if table == "runs":
            got["values"] = sorted(
                "%s|%s|%s|%s" % (r.run_id, r.revision, r.execution_status, r.wall_time_ns)
                for r in mine.select("run_id", "revision", "execution_status", "wall_time_ns").collect())
        out[ws][table] = got
print(json.dumps(out))
spark.stop()
