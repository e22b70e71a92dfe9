// viewer/app/fonts.h — the font node labels are drawn in: the one Graphviz measured them with.
//
// to_dot asks Graphviz for "DejaVu Sans" at 10 points (Debian's fonts-dejavu-core, which
// deps.sh installs), and Graphviz sizes each node's box for its label in that face.
// Drawing labels from the same TTF at 10 points × zoom makes them fit the boxes they were
// measured for, whatever else fontconfig would pick for a generic name like Helvetica;
// ImGui's built-in monospaced font is wider and clipped them. Invariant: the label font
// is added before the font atlas is first built (ImGui 1.86 cannot add fonts to a built
// atlas), i.e. right after ImGui::CreateContext().
#pragma once

#include <imgui.h>

namespace glass::viz::app {

inline constexpr const char* kLabelFontFile = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

// Adds ImGui's default font (still the UI's font) and the label font to io.Fonts. Returns
// false, adding only the default, when the font file is missing; labels then fall back to
// the default font and are shortened with "..." where they do not fit.
bool add_label_font(ImGuiIO& io, const char* file = kLabelFontFile);

// The label font if add_label_font() found it in this context, else ImGui's current font.
ImFont* label_font();

}  // namespace glass::viz::app
