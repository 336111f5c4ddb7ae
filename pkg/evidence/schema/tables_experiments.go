package schema

// Investigations, hypotheses and experiments. Revised records (hypotheses,
// findings) publish one row per revision; readers take the highest revision.

// Investigations records the question being investigated.
var Investigations = newTable("investigations", 1, 0,
	"Investigations: the question, the symptom and their lineage.",
	req("investigation_id", tStr, "investigation id"),
	req("question", tStr, "question under investigation"),
	opt("symptom", tStr, "observed symptom"),
	req("project_root", tStr, "project root the investigation belongs to"),
	req("status", tStr, "open | closed | ...").dict(),
	opt("parent_investigation_id", tStr, "investigation this one was split from"),
	req("created_at", tTime, "creation time"),
)

// Hypotheses has one row per hypothesis revision.
var Hypotheses = newTable("hypotheses", 1, 0,
	"Hypotheses, one row per revision.",
	req("hypothesis_id", tStr, "hypothesis id"),
	req("investigation_id", tStr, "investigation"),
	req("revision", tI32, "revision, 1 upwards (compare-and-set)"),
	req("claim", tStr, "claim"),
	req("prediction", tStr, "what should be observed if the claim holds"),
	req("discriminating_condition", tStr, "condition that tells it apart from alternatives"),
	req("assessment", tStr, "unassessed | supported | contradicted | inconclusive").dict(),
	req("lifecycle", tStr, "active | retired | ...").dict(),
	req("created_at", tTime, "revision time"),
)

// Experiments records an experiment's design and decision rule.
var Experiments = newTable("experiments", 1, 0,
	"Experiments: recipe, design, protocol, primary metric and decision rule.",
	req("experiment_id", tStr, "experiment id"),
	req("investigation_id", tStr, "investigation"),
	opt("hypothesis_id", tStr, "hypothesis tested"),
	req("recipe", tStr, "experiment recipe").dict(),
	req("recipe_version", tStr, "its version").dict(),
	req("workload_definition_id", tStr, "workload definition"),
	req("experiment_design_id", tStr, "experiment design identity"),
	req("measurement_protocol_id", tStr, "measurement protocol identity"),
	opt("validation_spec_id", tStr, "validation spec identity"),
	req("primary_metric", tStr, "metric the decision is made on").dict(),
	req("polarity", tStr, "lower_is_better | higher_is_better | neutral").dict(),
	req("estimand", tStr, "quantity estimated, e.g. median_ratio").dict(),
	req("practical_threshold", tF64, "smallest change that matters, in the estimand's scale"),
	req("confidence_level", tF64, "e.g. 0.95"),
	req("stopping_rule_json", tStr, "canonical JSON stopping rule"),
	req("random_seed", tU64, "seed for ordering and resampling"),
	req("role", tStr, "role of the experiment, e.g. primary | control").dict(),
	req("created_at", tTime, "creation time"),
)

// Variants are the arms of an experiment.
var Variants = newTable("variants", 1, 0,
	"Experiment variants (arms).",
	req("variant_id", tStr, "variant id"),
	req("experiment_id", tStr, "experiment"),
	req("name", tStr, "variant name, e.g. baseline").dict(),
	opt("source_state_id", tStr, "source state the variant runs"),
	opt("workload_instance_id", tStr, "workload instance the variant runs"),
	req("environment_requirements_json", tStr, "canonical JSON environment requirements"),
	req("parameters_json", tStr, "canonical JSON parameters"),
)

// Trials has one row per trial attempt; trials.run_id links runs to
// experiments (measurement rows never carry trial ids themselves).
var Trials = newTable("trials", 1, 0,
	"Trial attempts: which variant ran in which block and order, and how it ended.",
	req("trial_id", tStr, "trial id"),
	req("experiment_id", tStr, "experiment"),
	req("variant_id", tStr, "variant").dict(),
	opt("run_id", tStr, "run that executed the trial"),
	req("combination_id", tStr, "factor combination"),
	req("factors_json", tStr, "canonical JSON factor values"),
	opt("block_id", tStr, "block"),
	opt("order_in_block", tI32, "position in the block"),
	opt("parameter_name", tStr, "swept parameter").dict(),
	opt("parameter_value_int", tI64, "swept value (integer)"),
	opt("parameter_value_float", tF64, "swept value (float)"),
	req("attempt", tI32, "attempt number, 1 upwards"),
	req("outcome", tStr, "succeeded | failed | timed_out | cancelled | oracle_failed | unattempted").dict(),
	opt("exclusion_reason", tStr, "why the trial did not succeed, or was not compared"),
	req("validation_status", tStr, "validation status of the run").dict(),
	req("failure_class", tStr, "none | process | timeout | cancelled | validation | cross_treatment | capture").dict(),
)

// RunSets are frozen, digest-checked selections of runs.
var RunSets = newTable("run_sets", 1, 0,
	"Frozen run sets: selection, members and membership digest at one corpus commit.",
	req("run_set_id", tStr, "run set id"),
	req("corpus_commit_id", tStr, "corpus commit the selection was evaluated at"),
	req("created_at", tTime, "freeze time"),
	req("selection_json", tStr, "canonical JSON selection (filters)"),
	req("members_json", tStr, "canonical JSON member list"),
	req("member_count", tU64, "number of members").count(),
	req("membership_digest", tStr, "digest of the member list"),
)
