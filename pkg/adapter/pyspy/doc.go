// Package pyspy drives py-spy, the out-of-process sampling profiler for
// Python, as `py-spy record --format speedscope -- argv`: py-spy launches
// the approved workload and reads the interpreter's memory from outside,
// so the workload needs no code change and no import of a profiler.
//
// Why it is shaped this way:
//   - The probe is passive. Whether py-spy can read its child is decided by
//     settings readable without running anything (Yama's ptrace_scope,
//     CAP_SYS_PTRACE, the seccomp mode); the probe says which of these it
//     checked and which it cannot (filter rules, LSM policy). The one command
//     it runs is `py-spy --version`. The decision is the pure [Assess].
//   - flameox only launches (py-spy is the parent), never attaches to a pid,
//     so ptrace_scope 1 is enough; every refusal names the exact sysctl or
//     capability to change.
//   - A workload that is not a Python interpreter or script is refused at
//     plan time: py-spy would run it and then fail to find an interpreter,
//     after the workload had already run.
//   - Every sampling choice (native, gil, idle, subprocesses, rate, format)
//     is written into the plan's limitations, on or off, because each one
//     changes what the samples mean.
package pyspy
