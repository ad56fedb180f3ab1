# The package holds native libraries: a platform wheel, not a pure-Python one (pyproject.toml
# says the rest).
from setuptools import setup
from setuptools.dist import Distribution


class NativeDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=NativeDistribution)
