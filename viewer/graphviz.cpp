// viewer/graphviz.cpp — every libgvc call in glasstorch: render() and layout().
//
// Invariant: Graphviz is entered only through a Session, which holds the one mutex for its
// whole life, so no two threads are ever inside Graphviz at once, and uses the one GVC_t
// context (plugins load once, on first use, and stay until the process exits).
#include "viewer/graphviz.h"

#include <gvc.h>

#include <cstring>
#include <mutex>
#include <string>

#include "core/error.h"
#include "nn/serialize/file_io.h"
#include "viewer/layout.h"

namespace glass::viz {

namespace {

std::mutex g_mutex;
GVC_t* g_context = nullptr;         // guarded by g_mutex
std::string* g_messages = nullptr;  // where cgraph's messages go while a Session runs

// cgraph calls this for each warning or error instead of printing it to stderr.
int collect_message(char* message) {
  if (g_messages != nullptr && message != nullptr) *g_messages += message;
  return 0;
}

// One parsed and laid-out graph, with the mutex held for the Session's whole life. A
// failed parse or layout releases what it took before throwing (a throwing constructor
// gets no destructor call), so the next Session finds Graphviz as it was.
class Session {
 public:
  Session(const std::string& dot, const char* caller) : lock_(g_mutex) {
    if (g_context == nullptr) g_context = gvContext();
    GLASS_CHECK(g_context != nullptr, caller, ": could not create a Graphviz context");
    g_messages = &messages_;
    previous_handler_ = agseterrf(collect_message);
    graph_ = agmemread(dot.c_str());
    if (graph_ == nullptr) {
      release();
      GLASS_CHECK(false, caller, ": Graphviz could not parse the DOT text: ",
                  messages_.empty() ? std::string("(no message)") : messages_,
                  " (the text starts: \"", dot.substr(0, 60), dot.size() > 60 ? "...\")" : "\")");
    }
    if (gvLayout(g_context, graph_, "dot") != 0) {
      release();
      GLASS_CHECK(false, caller, ": Graphviz's dot layout failed: ", messages_);
    }
    laid_out_ = true;
  }
  ~Session() { release(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Agraph_t* graph() const { return graph_; }
  GVC_t* context() const { return g_context; }
  const std::string& messages() const { return messages_; }

 private:
  void release() {
    if (laid_out_) gvFreeLayout(g_context, graph_);
    if (graph_ != nullptr) agclose(graph_);
    laid_out_ = false;
    graph_ = nullptr;
    if (g_messages == &messages_) {
      agseterrf(previous_handler_);
      g_messages = nullptr;
    }
  }

  std::lock_guard<std::mutex> lock_;
  std::string messages_;
  agusererrf previous_handler_ = nullptr;
  Agraph_t* graph_ = nullptr;
  bool laid_out_ = false;
};

}  // namespace

// [SECTION] render -----------------------------------------------------------------------------

Format parse_format(const std::string& name) {
  if (name == "svg") return Format::Svg;
  if (name == "png") return Format::Png;
  GLASS_CHECK(false, "unknown output format '", name, "'; valid formats: svg, png");
  return Format::Svg;
}

const char* to_string(Format f) { return f == Format::Png ? "png" : "svg"; }

std::string render(const std::string& dot, Format format) {
  Session session(dot, "viz::render()");
  char* data = nullptr;
  unsigned int length = 0;
  int rc = gvRenderData(session.context(), session.graph(), to_string(format), &data, &length);
  std::string bytes = rc == 0 && data != nullptr ? std::string(data, length) : std::string();
  if (data != nullptr) gvFreeRenderData(data);
  GLASS_CHECK(rc == 0, "viz::render(): Graphviz could not render ", to_string(format), ": ",
              session.messages(),
              " (is the Graphviz plugin for it installed? apt install graphviz)");
  return bytes;
}

void render(const std::string& dot, Format format, const std::string& path) {
  std::string bytes = render(dot, format);
  serialize::AtomicFileWriter out(path, "viz::render(" + path + ")");
  out.write(bytes.data(), bytes.size());
  out.commit();
}

// [SECTION] layout -----------------------------------------------------------------------------

namespace {

int id_of(const std::string& name) {
  if (name.size() < 2 || name[0] != 'n') return -1;
  for (size_t i = 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::stoi(name.substr(1));
}

void read_clusters(Agraph_t* g, const boxf& bb, std::vector<ClusterBox>& out) {
  for (int i = 1; i <= GD_n_cluster(g); ++i) {
    Agraph_t* sub = GD_clust(g)[i];
    ClusterBox c;
    c.name = agnameof(sub);
    if (c.name.rfind("cluster_", 0) == 0) c.name = c.name.substr(8);
    char* label = agget(sub, const_cast<char*>("label"));
    c.label = label != nullptr ? label : "";
    c.min = {GD_bb(sub).LL.x - bb.LL.x, bb.UR.y - GD_bb(sub).UR.y};
    c.max = {GD_bb(sub).UR.x - bb.LL.x, bb.UR.y - GD_bb(sub).LL.y};
    out.push_back(std::move(c));
    read_clusters(sub, bb, out);
  }
}

}  // namespace

Layout layout(const std::string& dot) {
  Session session(dot, "viz::layout()");
  Agraph_t* g = session.graph();
  const boxf bb = GD_bb(g);
  // Graphviz's y grows upwards from the bounding box's lower-left corner; ours grows down
  // from its upper-left corner.
  auto flip = [&](pointf p) { return Point{p.x - bb.LL.x, bb.UR.y - p.y}; };
  Layout out;
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
    NodeBox box;
    box.name = agnameof(n);
    box.id = id_of(box.name);
    box.center = flip(ND_coord(n));
    box.width = ND_width(n) * 72;  // inches -> points
    box.height = ND_height(n) * 72;
    out.nodes.push_back(std::move(box));
  }
  for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
    for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e)) {
      EdgePath path;
      path.tail = agnameof(agtail(e));
      path.head = agnameof(aghead(e));
      path.from = id_of(path.tail);
      path.to = id_of(path.head);
      const splines* spl = ED_spl(e);
      if (spl != nullptr && spl->size > 0) {
        for (int b = 0; b < spl->size; ++b)
          for (int i = 0; i < spl->list[b].size; ++i)
            path.points.push_back(flip(spl->list[b].list[i]));
        const bezier& first = spl->list[0];
        const bezier& last = spl->list[spl->size - 1];
        if (first.sflag) path.start_arrow = flip(first.sp);
        if (last.eflag) path.end_arrow = flip(last.ep);
      }
      out.edges.push_back(std::move(path));
    }
  }
  read_clusters(g, bb, out.clusters);
  return out;
}

const NodeBox* Layout::node(int id) const {
  for (const NodeBox& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

const NodeBox* Layout::node(const std::string& name) const {
  for (const NodeBox& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

}  // namespace glass::viz
