// The report's table as JSON, for scripts: the same figures as the page (numbers unrounded, null
// where the page shows "—") and the names of the chart files.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cli/report/html_report.h"

namespace autotune::cli::report {

// {"database", "generated_at", "autotune_version", "filter", "targets": [...], "workloads": [{...}]}
nlohmann::json ReportJson(const ReportHeader& header, const std::vector<ReportSection>& sections);

}  // namespace autotune::cli::report
