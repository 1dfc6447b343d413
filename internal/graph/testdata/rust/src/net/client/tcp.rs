use self::inner::Socket;
pub fn dial() {}
