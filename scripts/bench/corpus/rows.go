package main

import (
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/evidence/schema"
)

type runCols struct {
	w                                               *schema.Writer
	id, typ, exec, capture, validation, env, wl, mp schema.StringCol
	rev                                             schema.Int32Col
	created                                         schema.TimeCol
	wall                                            schema.Int64Col
	nulls                                           []func()
}

func runHandles(w *schema.Writer) *runCols {
	c := &runCols{w: w, id: w.StringCol("run_id"), typ: w.StringCol("run_type"), exec: w.StringCol("execution_status"),
		capture: w.StringCol("capture_status"), validation: w.StringCol("validation_status"), env: w.StringCol("environment_id"),
		wl: w.StringCol("workload_name"), mp: w.StringCol("manifest_path"), rev: w.Int32Col("revision"),
		created: w.TimeCol("created_at"), wall: w.Int64Col("wall_time_ns")}
	for _, col := range w.Table().Columns[schema.NumCommon:] {
		switch col.Name {
		case "run_id", "run_type", "execution_status", "capture_status", "validation_status", "environment_id",
			"workload_name", "manifest_path", "revision", "created_at", "wall_time_ns":
			continue
		}
		switch col.TypeName() {
		case "string":
			c.nulls = append(c.nulls, w.StringCol(col.Name).AppendNull)
		case "int32":
			c.nulls = append(c.nulls, w.Int32Col(col.Name).AppendNull)
		case "int64":
			c.nulls = append(c.nulls, w.Int64Col(col.Name).AppendNull)
		case "timestamp[us, UTC]":
			c.nulls = append(c.nulls, w.TimeCol(col.Name).AppendNull)
		case "map<string,string>":
			c.nulls = append(c.nulls, w.StringMapCol(col.Name).AppendNull)
		default:
			panic("bench: unexpected runs column type " + col.TypeName())
		}
	}
	return c
}

func (c *runCols) row(id, workload, status string, now time.Time) error {
	c.id.Append(id)
	c.rev.Append(2)
	c.typ.Append("execution")
	c.created.Append(now)
	c.exec.Append(status)
	c.capture.Append("registered")
	c.validation.Append("not_requested")
	c.env.Append("sha256:env")
	c.wl.Append(workload)
	c.wall.Append(1e6)
	c.mp.Append("runs/" + id + "/manifest.json")
	for _, n := range c.nulls {
		n()
	}
	return c.w.EndRow()
}

type measurementCols struct {
	w                                               *schema.Writer
	id, run, name, unit, agg, scope, level, subject schema.StringCol
	valueInt                                        schema.Int64Col
	valueIndex                                      schema.Int32Col
	warm                                            schema.BoolCol
	nulls                                           []func()
}

func measurementHandles(w *schema.Writer) *measurementCols {
	c := &measurementCols{w: w, id: w.StringCol("measurement_id"), run: w.StringCol("run_id"), name: w.StringCol("name"),
		unit: w.StringCol("unit"), agg: w.StringCol("aggregation"), scope: w.StringCol("scope"), level: w.StringCol("evidence_level"),
		subject: w.StringCol("subject"), valueInt: w.Int64Col("value_int"), valueIndex: w.Int32Col("value_index"), warm: w.BoolCol("is_warmup")}
	c.nulls = []func(){w.StringCol("artifact_id").AppendNull, w.Float64Col("value_float").AppendNull, w.StringCol("outcome").AppendNull,
		w.StringCol("trial_id").AppendNull, w.StringCol("worker_id").AppendNull, w.Int32Col("worker_run_index").AppendNull,
		w.Uint64Col("loop_count").AppendNull, w.StringCol("block_id").AppendNull, w.StringCol("variant_id").AppendNull,
		w.Int32Col("order_in_block").AppendNull, w.StringCol("phase").AppendNull, w.StringMapCol("dimensions").AppendNull}
	return c
}

func (c *measurementCols) row(runID string, index int, value int64) error {
	c.id.Append(runID + "/" + strconv.Itoa(index))
	c.run.Append(runID)
	c.name.Append("process.wall_time")
	c.valueInt.Append(value)
	c.unit.Append("ns")
	c.agg.Append("value")
	c.scope.Append("process")
	c.subject.AppendNull()
	c.valueIndex.Append(int32(index))
	c.warm.Append(index == 0)
	c.level.Append("observed")
	for _, n := range c.nulls {
		n()
	}
	return c.w.EndRow()
}
