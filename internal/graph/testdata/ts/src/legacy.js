const { add } = require("./lib/math.js");
module.exports = add(1, 2);
