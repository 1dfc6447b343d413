from .core import Engine
