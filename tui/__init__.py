"""stacktop: a terminal dashboard for the on-call engineer of an OpenStack cloud."""

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml reads it from here


def version() -> str:
    """The installed distribution's version (its package metadata), else this source tree's."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("stacktop")
    except PackageNotFoundError:
        return __version__
