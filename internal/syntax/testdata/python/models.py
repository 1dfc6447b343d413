"""Models."""
import os
import os.path as osp, json
from . import utils
from ..pkg.sub import thing, other as o
from .local import *
from typing import TYPE_CHECKING

MAX_SIZE = 10
_private = 2
registry = {}

if TYPE_CHECKING:
    from .types import Hint


class Model(Base):
    KIND = "model"

    def __init__(self, name):
        self.name = name

    @property
    def title(self):
        return utils.title(self.name)

    def _hidden(self):
        return os.getcwd()


@decorator
def build(name: str) -> Model:
    def inner():
        pass
    return Model(name)


async def _fetch():
    return json.dumps({})
