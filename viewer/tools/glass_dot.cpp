// viewer/tools/glass_dot.cpp — glass-dot: a lesson's computation graph, or a stride
// picture, as DOT, SVG or PNG; or the simulated GPU's timeline, or FSDP's memory per rank
// against DDP's, as SVG; or a compiled function's graph before and after the passes.
//
//   glass-dot --list
//   glass-dot --demo mlp                                  # DOT text on stdout
//   glass-dot --demo mlp --format svg --out mlp.svg --collapse
//   glass-dot --demo if_else --forward --format png --out if_else.png
//   glass-dot --tensor 3,4 --view 't()' --highlight 1,2 --out transpose.svg
//   glass-dot --timeline trace.json --out timeline.svg   # write_chrome_trace()'s file
//   glass-dot --shard --ranks 2 --out shard.svg           # summary on stdout, picture in the file
//   glass-dot --compile seed --out seed.svg               # a compiled function before/after
//
// The lessons' README figures are made with it, so a picture always shows what the code
// does. Exit status: 0 on success, 2 for a bad command line (the message says which
// argument and lists the valid values), 1 when drawing fails.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "viewer/compile_view.h"
#include "viewer/demos.h"
#include "viewer/distributed_shard.h"
#include "viewer/dot.h"
#include "viewer/graphviz.h"
#include "viewer/modules.h"
#include "viewer/stride_dot.h"
#include "viewer/timeline.h"
#include "viewer/view_recipe.h"

namespace {

namespace viz = glass::viz;

const char* kUsage =
    "glass-dot: draws the computation graph of a lesson's model with Graphviz.\n"
    "\n"
    "usage: glass-dot --demo NAME [--format dot|svg|png] [--out FILE] [options]\n"
    "       glass-dot --tensor SIZES [--view RECIPE]... [--highlight INDEX] [--out FILE]\n"
    "       glass-dot --timeline TRACE.json [--out FILE.svg] [--width PX]\n"
    "       glass-dot --shard [--ranks N] [--no-prefetch] [--out FILE.svg] [--width PX]\n"
    "       glass-dot --compile NAME [--format dot|svg|png] [--out FILE]\n"
    "       glass-dot --list\n"
    "\n"
    "  --demo NAME     the model to draw (--list names them)\n"
    "  --format FMT    dot (text, the default), svg or png; without it, --out's extension\n"
    "                  decides (.svg, .png, else dot)\n"
    "  --out FILE      where to write (default: stdout; png needs a file)\n"
    "  --forward       the forward graph, recorded as it runs (ops by name, and values the\n"
    "                  result does not depend on, dashed), instead of the backward graph\n"
    "  --collapse      one box per module (a Linear is one node) instead of its ops\n"
    "  --saved         list each node's saved tensors (a stale one is flagged, red)\n"
    "  --grad-stats    write each node's gradient norm, max |g| and NaN/Inf counts\n"
    "  --no-shapes     leave the output shapes out of the labels\n"
    "  --no-grad       skip backward: no gradient colours on the edges\n"
    "  --list          name the demos, one line each\n"
    "\n"
    "stride pictures (lesson 02): a view's elements above the storage cells they live in\n"
    "  --tensor SIZES  the base tensor: arange(n).view(SIZES), SIZES as 3,4 or 3x4\n"
    "  --name NAME     what to call it in captions (default x)\n"
    "  --view RECIPE   a view of it written as code, e.g. 't()' or 'slice(0, 0, 3, 2)';\n"
    "                  repeat for up to 4 views of the one storage (aliasing shows)\n"
    "  --highlight I,J an element of the first view (negative counts from the end; '' for a\n"
    "                  0-dim view): its arrow is red and the caption evaluates the formula\n"
    "  --no-arrows     only the highlighted element's arrow\n"
    "  --values        storage cells show their values (indices below) instead of indices\n"
    "\n"
    "timelines (lesson 08): what the simulated GPU ran, one lane per stream and engine\n"
    "  --timeline FILE the Chrome trace JSON the simulator wrote "
    "(simulator().write_chrome_trace);\n"
    "                  drawn as SVG without Graphviz: spans per stream and engine, the host's\n"
    "                  enqueue marks, pinned copies solid and pageable ones hatched\n"
    "  --width PX      the SVG's width in pixels (default 1200; 1000 for --shard)\n"
    "\n"
    "sharding (lesson 11): one training step of a small MLP with Adam on N rank-threads,\n"
    "under DDP and under FSDP, memory counted per rank (RankMemoryLedger)\n"
    "  --shard         print each rank's bytes at rest and at peak against the arithmetic\n"
    "                  (16Ψ, 16Ψ/N), FSDP's gather peaks, and which rows of each parameter\n"
    "                  each rank owns; with --out FILE.svg, draw the curves and the bars too\n"
    "  --ranks N       ranks, 1 to 8 (default 2)\n"
    "  --no-prefetch   FSDP without forward and backward prefetch\n"
    "\n"
    "the compiler (lesson 12): a function compiled with glass::compile, its graph as traced\n"
    "beside the graph after the passes (fused groups boxed, a graph break in red)\n"
    "  --compile NAME  seed, passes, branch, mlp or backward (its joint graph); with\n"
    "                  --out FILE.svg|png the picture, and on stdout what the passes did\n"
    "                  and each fused group's loop\n"
    "  --help          this text\n";

struct Args {
  std::string demo, format, out;
  bool forward = false, collapse = false, list = false, help = false, grad = true;
  viz::DotOptions dot;
  // Stride pictures.
  std::string tensor, name = "x";
  std::optional<std::string> highlight;
  std::vector<std::string> views;
  viz::StrideDotOptions stride;
  // Timelines.
  std::string timeline;
  std::optional<std::string> width;
  // Sharding.
  bool shard = false, prefetch = true;
  // The compiler (lesson 12).
  std::string compile;
  std::optional<std::string> ranks;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "glass-dot: " << message << "\n(glass-dot --help shows the usage)\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--demo")
      a.demo = value();
    else if (arg == "--compile")
      a.compile = value();
    else if (arg == "--format")
      a.format = value();
    else if (arg == "--out")
      a.out = value();
    else if (arg == "--forward")
      a.forward = true;
    else if (arg == "--collapse")
      a.collapse = true;
    else if (arg == "--saved")
      a.dot.show_saved = true;
    else if (arg == "--grad-stats")
      a.dot.show_gradients = true;
    else if (arg == "--no-shapes")
      a.dot.show_shapes = false;
    else if (arg == "--no-grad")
      a.grad = false;
    else if (arg == "--list")
      a.list = true;
    else if (arg == "--tensor")
      a.tensor = value();
    else if (arg == "--name")
      a.name = value();
    else if (arg == "--view")
      a.views.push_back(value());
    else if (arg == "--highlight")
      a.highlight = value();
    else if (arg == "--no-arrows")
      a.stride.arrows = false;
    else if (arg == "--values")
      a.stride.storage_values = true;
    else if (arg == "--timeline")
      a.timeline = value();
    else if (arg == "--width")
      a.width = value();
    else if (arg == "--shard")
      a.shard = true;
    else if (arg == "--ranks")
      a.ranks = value();
    else if (arg == "--no-prefetch")
      a.prefetch = false;
    else if (arg == "--help" || arg == "-h")
      a.help = true;
    else
      usage_error("unknown argument '" + arg + "'");
  }
  return a;
}

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// glass-dot --timeline: the whole picture is made before anything is written, so a file
// that is missing, is not JSON or is not the simulator's trace is a usage error (exit 2).
int draw_timeline(const Args& a) {
  if (!a.demo.empty() || !a.tensor.empty())
    usage_error("--timeline draws a trace, not a graph or a stride picture; drop --demo/--tensor");
  if (!a.views.empty() || a.highlight)
    usage_error("--view and --highlight belong to stride pictures, not to --timeline");
  if ((!a.format.empty() && a.format != "svg") || ends_with(a.out, ".png") ||
      ends_with(a.out, ".dot"))
    usage_error(
        "--timeline draws SVG only (plain SVG text, no Graphviz): use --format svg, or an "
        "--out FILE ending in .svg");
  viz::TimelineSvgOptions options;
  if (a.width) {
    char* end = nullptr;
    const long w = std::strtol(a.width->c_str(), &end, 10);
    if (a.width->empty() || *end != '\0' || w < 300 || w > 100000)
      usage_error("--width needs a width in pixels from 300 to 100000, got '" + *a.width + "'");
    options.width = static_cast<int>(w);
  }
  std::string svg;
  try {
    svg = viz::timeline_to_svg(viz::load_timeline(a.timeline), options);
  } catch (const glass::Error& e) {
    usage_error(e.what());
  }
  if (a.out.empty()) {
    std::cout << svg;
    return 0;
  }
  std::ofstream file(a.out, std::ios::binary);
  file << svg;
  if (!file.flush()) {
    std::cerr << "glass-dot: could not write " << a.out << "\n";
    return 1;
  }
  return 0;
}

// A whole number from `least` to `most`, or a usage error naming the flag.
int bounded(const std::string& flag, const std::string& text, long least, long most) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < least || v > most)
    usage_error(flag + " needs a whole number from " + std::to_string(least) + " to " +
                std::to_string(most) + ", got '" + text + "'");
  return static_cast<int>(v);
}

// glass-dot --shard: records both rungs (a fraction of a second), prints the summary, and
// writes the picture when asked. Options are checked before anything runs.
int draw_shard(const Args& a) {
  if (!a.demo.empty() || !a.tensor.empty() || !a.timeline.empty())
    usage_error("--shard records a training step; drop --demo, --tensor and --timeline");
  if (!a.views.empty() || a.highlight)
    usage_error("--view and --highlight belong to stride pictures, not to --shard");
  if ((!a.format.empty() && a.format != "svg") || (!a.out.empty() && !ends_with(a.out, ".svg")))
    usage_error("--shard draws SVG only: give --out FILE.svg (the summary goes to stdout)");
  const int ranks = a.ranks ? bounded("--ranks", *a.ranks, 1, 8) : 2;
  const int width = a.width ? bounded("--width", *a.width, 300, 100000) : 1000;
  std::optional<viz::ShardRecording> recorded;
  try {
    recorded = viz::record_sharding({.world_size = ranks, .prefetch = a.prefetch});
  } catch (const std::exception& e) {
    std::cerr << "glass-dot: " << e.what() << "\n";
    return 1;
  }
  const viz::ShardRecording& rec = *recorded;
  std::cout << rec.summary();
  if (a.out.empty()) return 0;
  std::ofstream file(a.out, std::ios::binary);
  file << viz::shard_to_svg(rec, width);
  if (!file.flush()) {
    std::cerr << "glass-dot: could not write " << a.out << "\n";
    return 1;
  }
  std::cout << "wrote " << a.out << "\n";
  return 0;
}

// glass-dot --compile NAME: compiles the demo function, prints what the passes did (and the
// generated loop of each fused group), and writes the before/after picture when asked.
int draw_compile(Args& a) {
  if (!a.demo.empty() || !a.tensor.empty() || !a.timeline.empty() || a.shard)
    usage_error("--compile draws a compiled function; drop --demo, --tensor, --timeline, --shard");
  if (a.format.empty())
    a.format = ends_with(a.out, ".svg") ? "svg" : ends_with(a.out, ".png") ? "png" : "dot";
  std::optional<viz::CompileView> view;
  try {
    if (a.format != "dot") viz::parse_format(a.format);
    view = viz::record_compile(a.compile);
  } catch (const glass::Error& e) {
    usage_error(e.what());
  }
  const std::string dot = viz::compile_dot(*view);
  if (a.out.empty() && a.format == "dot") {
    std::cout << dot;
    return 0;
  }
  std::cout << viz::compile_summary(*view);
  for (size_t g = 0; g < view->info.sources.size(); ++g)
    std::cout << "fused group " << g << ":\n" << viz::kernel_body(*view, static_cast<int>(g));
  if (a.out.empty()) usage_error(a.format + " is binary or long: give --out FILE");
  try {
    if (a.format == "dot") {
      std::ofstream file(a.out, std::ios::binary);
      file << dot;
      if (!file.flush()) throw glass::Error("could not write " + a.out);
    } else {
      viz::render(dot, viz::parse_format(a.format), a.out);
    }
  } catch (const std::exception& e) {
    std::cerr << "glass-dot: " << e.what() << "\n";
    return 1;
  }
  std::cout << "wrote " << a.out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  if (a.help) {
    std::cout << kUsage;
    return 0;
  }
  if (a.list) {
    for (const viz::Demo& d : viz::demos())
      std::printf("%-10s %s\n", d.name.c_str(), d.description.c_str());
    return 0;
  }
  if (!a.compile.empty()) return draw_compile(a);
  if (a.shard) return draw_shard(a);
  if (a.ranks || !a.prefetch) usage_error("--ranks and --no-prefetch go with --shard");
  if (!a.timeline.empty()) return draw_timeline(a);
  if (a.width) usage_error("--width sizes a timeline: give --timeline TRACE.json or --shard");
  if (a.demo.empty() == a.tensor.empty())
    usage_error(a.demo.empty()
                    ? "say what to draw: --demo NAME (--list names them) or --tensor SIZES"
                    : "--demo and --tensor draw different pictures; give one of them");
  if (a.tensor.empty() && (!a.views.empty() || a.highlight))
    usage_error("--view and --highlight belong to stride pictures: give --tensor SIZES");
  if (a.format.empty())
    a.format = ends_with(a.out, ".svg") ? "svg" : ends_with(a.out, ".png") ? "png" : "dot";
  const viz::Demo* demo = nullptr;
  std::vector<viz::StrideView> views;
  std::string stride_dot;
  try {
    if (!a.demo.empty()) demo = &viz::find_demo(a.demo);
    if (a.format != "dot") viz::parse_format(a.format);  // checks the name before the work
    if (!a.tensor.empty()) {
      // The whole picture is made here, before any rendering: a bad size, recipe or
      // highlight, or views too large to draw, is a usage error (exit 2).
      glass::Tensor base = viz::numbered_tensor(a.tensor, viz::kMaxStridePictureCells);
      if (a.views.empty()) a.views.push_back("");
      for (const std::string& recipe : a.views) {
        std::vector<viz::ViewStep> steps = viz::parse_view_recipe(recipe);
        views.push_back({a.name + viz::recipe_code(steps), viz::apply_views(base, steps)});
      }
      if (a.highlight) a.stride.highlight = viz::parse_index(*a.highlight);
      stride_dot = viz::stride_to_dot(views, a.stride);
    }
  } catch (const glass::Error& e) {
    usage_error(e.what());
  }
  if (a.format == "png" && a.out.empty())
    usage_error("--format png writes binary data: give a file with --out FILE");

  try {
    std::string dot;
    if (demo != nullptr) {
      viz::Snapshot s = viz::capture(*demo, {.forward = a.forward, .gradients = a.grad});
      if (a.collapse) s = viz::collapse_modules(s);
      dot = viz::to_dot(s, a.dot);
    } else {
      dot = stride_dot;
    }
    if (a.format == "dot") {
      if (a.out.empty()) {
        std::cout << dot;
      } else {
        std::ofstream file(a.out, std::ios::binary);
        file << dot;
        if (!file.flush()) throw glass::Error("could not write " + a.out);
      }
    } else if (a.out.empty()) {
      std::cout << viz::render(dot, viz::parse_format(a.format));
    } else {
      viz::render(dot, viz::parse_format(a.format), a.out);
    }
  } catch (const std::exception& e) {
    std::cerr << "glass-dot: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
