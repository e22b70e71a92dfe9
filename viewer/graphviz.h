// viewer/graphviz.h — DOT text to SVG or PNG through libgvc, Graphviz's own library.
//
// The output is byte for byte what the `dot` command prints for the same text (`dot -Tsvg`,
// `dot -Tpng`): both run the same layout engine and the same renderer plugins. Graphviz
// keeps global state (cgraph's error handler, its parser, the layout engines' statics) and
// is not thread-safe, so every libgvc call in glasstorch — render() here and layout() in
// layout.h — lives in graphviz.cpp, under one mutex, on one GVC_t context made on first use.
#pragma once

#include <cstdint>
#include <string>

namespace glass::viz {

enum class Format : uint8_t { Svg, Png };

// "svg" or "png"; anything else is a glass::Error that lists the valid names.
Format parse_format(const std::string& name);
const char* to_string(Format f);

// Lays out `dot` with the dot engine and returns the rendered bytes. Text Graphviz cannot
// parse or lay out is a glass::Error carrying Graphviz's own message.
std::string render(const std::string& dot, Format format);
// The same, written to `path` atomically (a reader never sees half a file).
void render(const std::string& dot, Format format, const std::string& path);

}  // namespace glass::viz
