require "json"
require_relative "lib/helper"

VERSION = "1.0"

module Shop
  class Store < Base
    LIMIT = 5

    def initialize(name)
      @name = name
    end

    def self.open(path)
      new(JSON.parse(File.read(path)))
    end

    def total
      Helper.sum(@items)
    end
  end
end

def top_level
  Shop::Store.open("x")
end
