"""Maps the top-level resources/ folder into the package as gpu_companion.resources."""

from setuptools import find_packages, setup

setup(packages=[*find_packages("desktop"), "gpu_companion.resources"])
