// One rank's share of a problem: the global problem cut to a box (model, damping profiles, regions,
// free surfaces) in the box's own coordinates, and source/receiver nodes moved into it. Pure (no MPI).
#pragma once
#include <vector>

#include "kernels/propagator.hpp"
#include "kernels/tti_propagator.hpp"
#include "mpi/decomposition.hpp"

namespace minimod::mpi {

/// The problem a rank's propagator solves: `global` restricted to `box`, with halos exchanged on
/// the faces in `halo` (faces with a neighbour are never free surfaces).
kernels::AcousticIsoProblem subdomain_problem(const kernels::AcousticIsoProblem& global,
                                              const physics::Box3& box,
                                              const kernels::HaloFaces& halo);

/// The same for the acoustic TTI problem (finished: theta, phi, a over medium_box). The subdomain's
/// medium covers its box grown by the radius, cut from the global medium, so the halo holds the
/// neighbours' medium (the self-adjoint stencil weighs both ends of each pair).
kernels::AcousticTtiProblem subdomain_problem(const kernels::AcousticTtiProblem& global,
                                              const physics::Box3& box,
                                              const kernels::HaloFaces& halo);

/// Where cuts may fall for `problem`: the CPML's psi fields are read across cuts along their own
/// axis, so cuts keep the halo width away from each absorbing layer; Minimod's PML has no such need.
CutLimits cut_limits(const kernels::AcousticIsoProblem& problem);
/// TTI: anywhere with the sponge layer (no memory field read across a cut); with the CPML as for
/// the isotropic CPML, so that psi along an axis is never needed in that axis's halo.
CutLimits cut_limits(const kernels::AcousticTtiProblem& problem);

/// The nodes inside `box`, in box coordinates; `index[e]` = position of node e in `nodes`.
std::vector<kernels::NodeWeight> nodes_in(const std::vector<kernels::NodeWeight>& nodes,
                                          const physics::Box3& box, std::vector<int>* index = nullptr);

}  // namespace minimod::mpi
