"""The Runs page: sharded runs across hosts on GNU parallel, their shards, and fleet exports."""
