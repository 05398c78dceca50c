package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// FormatCSV is the Source.Format of records read from a plain CSV table.
const FormatCSV = "csv"

// ParseCSV reads a plain CSV table of results: a header row, then one row
// per measured point. Columns are recognised as in markdown tables — vLLM's
// own field names (mean_ttft_ms, request_throughput, …) or headers such as
// "Mean TTFT (ms)", "Concurrency", "Request Rate", "ISL", "OSL" — and
// columns naming the system (gpu, gpu_count, model, engine, engine_version,
// topology, tensor_parallel_size, pipeline_parallel_size,
// data_parallel_size) fill each row's System. Other columns are ignored; a
// table without a metric column is an error.
func ParseCSV(name string, data []byte) ([]Record, error) {
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	t := &table{format: FormatCSV}
	var sysCols, keep []int
	var sysNames []string
	sysByLine := map[int]map[string]string{}
	for {
		row, line, err := readCSVRow(cr, name)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" || strings.HasPrefix(strings.TrimSpace(row[0]), "#") {
			continue
		}
		if t.header == nil {
			for i, h := range row {
				if isSystemKey(h) {
					sysCols = append(sysCols, i)
					sysNames = append(sysNames, strings.TrimSpace(h))
				} else {
					keep = append(keep, i)
				}
			}
			for _, i := range keep {
				t.header = append(t.header, row[i])
			}
			t.headerLine = line
			continue
		}
		if len(row) != len(sysCols)+len(keep) {
			if len(row) < len(sysCols)+len(keep) {
				return nil, errorf(name, line, "", "missing cell: the row has %d cells, the header %d", len(row), len(sysCols)+len(keep))
			}
			return nil, errorf(name, line, "", "the row has %d cells, the header at line %d only %d", len(row), t.headerLine, len(sysCols)+len(keep))
		}
		cells := make([]string, 0, len(keep))
		for _, i := range keep {
			cells = append(cells, row[i])
		}
		kv := map[string]string{}
		for j, i := range sysCols {
			kv[sysNames[j]] = row[i]
		}
		t.rows = append(t.rows, tableRow{line: line, cells: cells})
		sysByLine[line] = kv
	}
	if t.header == nil {
		return nil, errorf(name, 0, "", "empty CSV: no header row")
	}
	recs, err := t.records(name, DocID(name))
	if err != nil {
		return nil, err
	}
	if recs == nil {
		return nil, errorf(name, t.headerLine, "", "CSV without a metric column (want vLLM names such as mean_ttft_ms and request_throughput, or headers such as \"Mean TTFT (ms)\")")
	}
	for i := range recs {
		kv := sysByLine[recs[i].Source.Line]
		if len(kv) == 0 {
			continue
		}
		if err := applySystem(name, recs[i].Source.Line, &recs[i], kv); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// readCSVRow reads one CSV record and the line it starts on; io.EOF at the
// end, and a parse error as the package's file:line error.
func readCSVRow(cr *csv.Reader, name string) ([]string, int, error) {
	row, err := cr.Read()
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, 0, errorf(name, pe.Line, "", "invalid CSV: %v", pe.Err)
		}
		return nil, 0, errorf(name, 0, "", "invalid CSV: %v", err)
	}
	line, _ := cr.FieldPos(0)
	return row, line, nil
}
