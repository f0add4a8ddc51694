// Package report renders the fault harness's results: the safety report in
// Markdown (Markdown, with the W7 table, and CLIMarkdown) that
// docs/safety.md is made of, pooled per store (Aggregate), and the
// one-run summaries printed by the command (Summary, StallSummary,
// CLISummary). It reads the suite's results files (ReadRecords,
// ReadStallRecords, ReadCLIRecords), so that a report can be rendered
// again from the raw results. No process or network code.
package report
