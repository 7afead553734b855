"""What a runner label offers: GPUs per node and nodes, from runners.yaml and fleets.yaml."""

from __future__ import annotations

from infersweep.config.capacity import FleetSize, label_capacity, replica_gpus, worker_nodes

LABELS = {"mi355x": ["mi355x-amds_00", "mi355x-amds_01"],
          "mi355x-disagg": ["mi355x-amds_02"],
          "gb200": ["gb200-nv_0", "gb200-nv_1"],
          "cluster:gb200-nv": ["gb200-nv_0", "gb200-nv_1", "gb200-nv_2"],
          "mixed": ["mi355x-amds_00", "other_00"]}
HARDWARE = {"mi355x": {"gpus-per-node": 8}, "cluster:gb200-nv": {"gpus-per-node": 4}}
FLEETS = {"mi355x-amds": FleetSize(10, 8, "configs/fleets.yaml")}


def cap(label, fleets=FLEETS):
    return label_capacity(label, LABELS, HARDWARE, "runners.yaml", fleets)


def test_the_labels_hardware_record_gives_gpus_per_node_and_the_fleet_its_nodes():
    c = cap("mi355x")
    assert (c.gpus_per_node, c.nodes) == (8, 10)
    assert c.gpus_source == "hardware.mi355x.gpus-per-node in runners.yaml"
    assert c.nodes_source == "the nodes of fleet mi355x-amds in configs/fleets.yaml"


def test_without_a_hardware_record_the_fleet_gives_gpus_per_node():
    c = cap("mi355x-disagg")
    assert (c.gpus_per_node, c.nodes) == (8, 10)
    assert c.gpus_source == "fleet mi355x-amds in configs/fleets.yaml"


def test_a_label_sharing_runners_with_a_recorded_label_takes_its_gpus_per_node():
    """InferenceX records gb200's 4 GPUs per node under cluster:gb200-nv only."""
    c = cap("gb200")
    assert c.gpus_per_node == 4 and "cluster:gb200-nv" in c.gpus_source
    assert c.nodes is None  # runners are not nodes: without a fleet the count is unknown


def test_nodes_are_unknown_unless_every_runner_belongs_to_a_known_fleet():
    assert cap("mixed").nodes is None
    assert cap("mi355x", fleets={}).nodes is None
    assert cap("nowhere").gpus_per_node is None


def test_gpus_of_a_replica_and_nodes_of_a_worker_pool():
    assert replica_gpus({"tp": 8, "pp": 2, "pcp-size": 2}) == 32
    assert replica_gpus({"tp": 4}) == 4
    assert worker_nodes({"num-worker": 3, "tp": 8}, 8) == 3
    assert worker_nodes({"num-worker": 2, "tp": 16}, 8) == 4
    assert worker_nodes({"num-worker": 2, "tp": 4}, 8) == 2  # each worker on nodes of its own
    assert worker_nodes({"num-worker": 0, "tp": 8}, 8) == 0
