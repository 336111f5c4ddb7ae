// Package coverage captures Python programs under `python -m coverage run
// --branch` and reads coverage.py's JSON reports (`coverage json`) into
// observations: each executed and missing line, each executed and missing
// branch arc, each file's summary, and the run's totals as measurements,
// the numbers `coverage report` prints. The report is read rather than
// the .coverage SQLite data file because the report is coverage.py's
// supported interchange format (the data file's schema is private) and it
// alone knows which lines are statements.
package coverage
