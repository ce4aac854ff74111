package ledger

// What resuming a run reads back: which requests of each cell completed
// (their outputs are never paid for again) and which did not. Each query
// reads the run's rows through the requests_by_run index, oldest first,
// and settles the run as Requests does.

// CellKey names a cell of a run: the tested model, the test, the repeat.
type CellKey struct {
	Model  string
	Test   string
	Repeat int
}

// Cell is the cell a request serves: for a judge request the tested model
// is CandidateModel (Model is the judge's). Warm-ups and probes serve none
// (zero Test).
func (r Request) Cell() CellKey {
	m := r.Model
	if r.Purpose == PurposeJudge {
		m = r.CandidateModel
	}
	return CellKey{Model: m, Test: r.Test, Repeat: r.Repeat}
}

// JudgeSample names one judge sample of one cell in one round of judging.
type JudgeSample struct {
	Cell   CellKey
	Judge  string
	Sample int
	Round  int
}

const (
	openRequestsSQL = `SELECT ` + requestColumns + ` FROM requests
		WHERE run_id = ? AND status IN ` + openStatuses + ` ORDER BY id`
	completedSQL = `SELECT ` + requestColumns + ` FROM requests
		WHERE run_id = ? AND purpose = ? AND status = 'completed' ORDER BY id`
)

// OpenRequests lists a run's requests still queued, submitted or running,
// oldest first. A run whose process is gone has none: they were closed as
// interrupted (see Requests).
func (l *Ledger) OpenRequests(runID string) ([]Request, error) {
	out, err := l.runRequests("open requests of run "+runID, runID, openRequestsSQL, runID)
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, r := range out {
		if isOpen[r.Status] {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// RequestsByCell lists the inference and judge requests of a run by the
// cell they serve, each cell's oldest first, whatever their status: the
// attempts made so far (to number the next), what was interrupted, and
// batch ids of requests that a provider may still be answering. Judge
// requests written before schema 4 name no tested model and are listed
// under a cell with an empty Model.
func (l *Ledger) RequestsByCell(runID string) (map[CellKey][]Request, error) {
	all, err := l.Requests(runID)
	if err != nil {
		return nil, err
	}
	out := map[CellKey][]Request{}
	for _, r := range all {
		if r.Purpose != PurposeInference && r.Purpose != PurposeJudge {
			continue
		}
		out[r.Cell()] = append(out[r.Cell()], r)
	}
	return out, nil
}

// CompletedInference returns, for each cell of a run, its last completed
// inference request: output, reasoning, tool calls, tokens and timings. A
// cell missing from it has no answer to keep and must be sent.
func (l *Ledger) CompletedInference(runID string) (map[CellKey]Request, error) {
	rows, err := l.queryRequests("completed inference of run "+runID, completedSQL, runID, PurposeInference)
	if err != nil {
		return nil, err
	}
	out := make(map[CellKey]Request, len(rows))
	for _, r := range rows {
		out[r.Cell()] = r // oldest first: the last completed wins
	}
	return out, nil
}

// CompletedJudge returns a run's completed judge samples, the last of each
// (cell, judge, sample, round); cache hits count, since they are recorded
// completed. Judge requests from before schema 4 name no tested model and
// are left out: their cells are judged again.
func (l *Ledger) CompletedJudge(runID string) (map[JudgeSample]Request, error) {
	rows, err := l.queryRequests("completed judge samples of run "+runID, completedSQL, runID, PurposeJudge)
	if err != nil {
		return nil, err
	}
	out := make(map[JudgeSample]Request, len(rows))
	for _, r := range rows {
		if r.CandidateModel == "" {
			continue
		}
		out[JudgeSample{Cell: r.Cell(), Judge: r.Judge, Sample: r.Sample, Round: r.Round}] = r
	}
	return out, nil
}
