"""The runs_per_environment fleet question in Apache Spark local mode over
the same export directories (scripts/bench/fleet-query.sh): read each
directory's runs (Hive partitions from workspace_id=/date= names), keep
the newest revision per run, count per environment. Prints the session
start, the first query (files listed and read) and the median of 5 more.

usage: fleet_spark.py DIR...
"""
import statistics
import sys
import time

t0 = time.time()
from pyspark.sql import SparkSession, Window, functions as F

spark = (SparkSession.builder.master("local[2]").appName("flameox-fleet-bench")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
started = time.time() - t0


def query():
    df = None
    for d in sys.argv[1:]:
        part = spark.read.option("mergeSchema", "true").parquet(d + "/runs")
        df = part if df is None else df.unionByName(part, allowMissingColumns=True)
    w = Window.partitionBy("workspace_id", "run_id").orderBy(F.col("revision").desc(), F.col("published_at").desc())
    cur = df.withColumn("rn", F.row_number().over(w)).where("rn = 1")
    return (cur.groupBy("environment_id")
            .agg(F.count("*").alias("runs"), F.countDistinct("workspace_id").alias("workspaces"))
            .orderBy(F.col("runs").desc(), "environment_id").collect())


s = time.time()
rows = query()
first = time.time() - s
times = []
for _ in range(5):
    s = time.time()
    query()
    times.append(time.time() - s)
print("Spark local[2] runs_per_environment over %d corpora: session start %.1f s, first query %.2f s, median of 5 more %.2f s (%d environments, %d runs)"
      % (len(sys.argv) - 1, started, first, statistics.median(times), len(rows), sum(r["runs"] for r in rows)))
spark.stop()
