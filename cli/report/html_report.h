// The report page: one self-contained HTML file (inline CSS, inline SVG, no script, nothing
// fetched), so it can be mailed, attached to an issue or opened from a GPU machine's disk.
#pragma once

#include <string>
#include <vector>

#include "cli/report/tuning_summary.h"

namespace autotune::cli::report {

struct ReportHeader {
  std::string database;      // the path as given
  std::string generated_at;  // ISO-8601 UTC
  std::string version;       // autotune::kVersion
  std::string filter;        // e.g. "--op gemm --target cuda"; "" when every record is reported
};

// One workload on one target: its table row, its charts, and the name of its chart files.
struct ReportSection {
  WorkloadSummary summary;
  std::string slug;  // the charts are also <slug>-trials.svg and <slug>-seconds.svg beside the page
  std::string trials_svg;
  std::string seconds_svg;
};

// File-name-safe, unique names for the summaries, in their order: "<op>_<key prefix>_<kind>-<arch>"
// (the key prefix as `tune --out` names kernel files), "-2", "-3", ... added for repeats (one
// architecture on two devices).
std::vector<std::string> MakeSlugs(const std::vector<WorkloadSummary>& summaries);

// The distinct targets of the sections, as TargetInfo::Text(), in order of appearance.
std::vector<std::string> TargetsPresent(const std::vector<ReportSection>& sections);

std::string RenderHtmlReport(const ReportHeader& header, const std::vector<ReportSection>& sections);

}  // namespace autotune::cli::report
