// viewer/modules.h — which module each node belongs to, and folding a module into one box.
//
// A real network's graph is hundreds of nodes; drawn by module ("fc1: Linear") it is a
// dozen. A forward recording knows each node's module exactly from nn's module scopes; a
// backward graph has no such record, so there membership is inferred from the parameters
// (Note [Which module a node belongs to], modules.cpp). Every membership either reports is
// true, and ops inference cannot place stay outside. Folding is a pure function Snapshot ->
// Snapshot, so a GUI can fold and expand boxes without touching the graph again.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "viewer/snapshot.h"

namespace glass::nn {
class Module;
}

namespace glass::viz {

// Sets Snapshot::modules (every submodule, depth-first) and each node's GraphNode::module.
// snapshot() and ForwardRecorder::snapshot() call it when SnapshotOptions::module is set.
// scoped[id], when set, is node id's module for certain (ForwardRecorder: the module scope
// it was created in; "" for none) and is kept as it is; the other nodes are inferred.
// scoped may be shorter than s.nodes (missing ids are inferred).
void assign_modules(Snapshot& s, nn::Module& module,
                    const std::vector<std::optional<std::string>>& scoped = {});

// Folds each module's nodes into one NodeKind::Module node (name: the module's type,
// label: its path, members: the ids it stands for), at the outermost level not named in
// `expanded`: with "body" expanded, "body.0" and "body.2" fold separately and sit inside
// body's cluster. Edges inside one folded module disappear; one tensor entering a folded
// module at several of its ops is drawn once; parallel edges into an op stay (each is one
// tensor passed). A folded node's output and gradient are those of its member whose output
// leaves the module (the latest, if several). Ops records are remapped to the new ids.
Snapshot collapse_modules(const Snapshot& s, const std::set<std::string>& expanded = {});

}  // namespace glass::viz
