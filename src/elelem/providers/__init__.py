"""The provider catalog (docs/architecture.md §1): name -> shape, base URL, key and auth.

``provider:model`` addresses a model; :func:`load_catalog` gives the built-in
providers plus the user's config file; :func:`load_shape` imports a shape by
name on first use.
"""

from elelem.providers.catalog import (
    BUILTIN,
    COMPATIBLE,
    Catalog,
    ProviderSpec,
    Target,
    load_shape,
    parse_model,
    shape_of,
)
from elelem.providers.config import apply_config, config_path, load_catalog

__all__ = [
    "BUILTIN",
    "COMPATIBLE",
    "Catalog",
    "ProviderSpec",
    "Target",
    "apply_config",
    "config_path",
    "load_catalog",
    "load_shape",
    "parse_model",
    "shape_of",
]
