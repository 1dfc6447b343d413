import os
from . import utils
from .sub.helpers import h

class Engine:
    def run(self):
        return utils.clean(h())
