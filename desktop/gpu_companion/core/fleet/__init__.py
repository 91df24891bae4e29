"""Work across several rented hosts: sharded runs on GNU parallel, and the fleet handed to the
engines users grow into (Ansible, Ray, SkyPilot). No scheduler of its own."""
