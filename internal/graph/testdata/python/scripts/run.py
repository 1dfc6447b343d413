import requests
import pkg.core

pkg.core.Engine().run()
