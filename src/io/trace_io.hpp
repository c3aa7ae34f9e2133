// Request traces for hwplan serve: CSV (a header row naming the columns) or JSON Lines, with the column names of
// the public Azure LLM inference traces (TIMESTAMP, ContextTokens, GeneratedTokens) and of vLLM's benchmark
// datasets and results (input_len / output_len, prompt_tokens / output_tokens); a vLLM benchmark result file
// (one JSON object with input_lens and output_lens arrays) gives lengths without arrival times. Bad rows are
// input errors naming file:line and the column.
#pragma once

#include <string>
#include <vector>

#include "serve/traffic.hpp"

namespace hwplan::io {

// Rows sorted by arrival (when the trace has arrival times), arrivals relative to the first. A vLLM benchmark
// result's failed requests (output 0) are left out, as the benchmark's own metrics leave them; `failed`, when given,
// receives how many were.
std::vector<serve::TraceRow> load_trace(const std::string& path, long long* failed = nullptr);
std::vector<serve::TraceRow> parse_trace(const std::string& text, const std::string& file, long long* failed = nullptr);
// A file of lengths (--prompt-dist file:PATH): one whole number per line, '#' comments and blank lines ignored.
std::vector<long long> load_lengths(const std::string& path);

}  // namespace hwplan::io
