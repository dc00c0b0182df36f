// Escaping text for HTML and SVG: every string from a database or the command line that goes into
// the report (workload text, device names, paths, titles) passes through here, so a device name
// like "A<B>&C" cannot break the markup.
#pragma once

#include <string>
#include <string_view>

namespace autotune::cli::report {

// `text` with & < > " ' replaced by character references: safe in element content and in quoted
// attribute values of both HTML and XML (SVG). Control characters (not allowed in XML) become spaces.
std::string EscapeMarkup(std::string_view text);

}  // namespace autotune::cli::report
