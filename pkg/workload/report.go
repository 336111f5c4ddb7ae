package workload

import "github.com/flameox/flameox/pkg/workspace"

// List is the result of `flameox workload list` and MCP list_workloads.
type List struct {
	SchemaVersion int       `json:"schema_version"`
	File          string    `json:"file"`
	Workloads     []Summary `json:"workloads"`
}

// Detail is the result of `flameox workload show` and MCP get_workload:
// the canonical form, its digest, the approval state and what changed
// since the approval.
type Detail struct {
	SchemaVersion int        `json:"schema_version"`
	Name          string     `json:"name"`
	Description   string     `json:"description,omitempty"`
	DefinitionID  string     `json:"definition_id"`
	Approval      string     `json:"approval"`
	Changes       []string   `json:"changes_since_approval"`
	Definition    Definition `json:"definition"`
}

// ListFor lists the workloads declared for ws's project.
func ListFor(ws *workspace.Workspace) (*List, error) {
	f, err := Load(ws.ProjectRoot)
	if err != nil {
		return nil, err
	}
	a, err := LoadApprovals(ws.Root)
	if err != nil {
		return nil, err
	}
	return &List{SchemaVersion: 1, File: FileName, Workloads: Summarize(f, a)}, nil
}

// Lookup loads one declared workload and the approvals.
func Lookup(ws *workspace.Workspace, name string) (*Workload, *Approvals, error) {
	f, err := Load(ws.ProjectRoot)
	if err != nil {
		return nil, nil, err
	}
	wl, err := f.Workload(name)
	if err != nil {
		return nil, nil, err
	}
	a, err := LoadApprovals(ws.Root)
	return wl, a, err
}

// ShowFor describes one declared workload.
func ShowFor(ws *workspace.Workspace, name string) (*Detail, error) {
	wl, a, err := Lookup(ws, name)
	if err != nil {
		return nil, err
	}
	d := &Detail{SchemaVersion: 1, Name: wl.Name, Description: wl.Description, DefinitionID: wl.DefinitionID(), Approval: a.Status(wl),
		Changes: []string{}, Definition: wl.Canonical()}
	if ap := a.Workloads[wl.Name]; ap != nil && d.Approval != Approved {
		d.Changes = Diff(ap.Canonical, wl.Canonical())
	}
	return d, nil
}
