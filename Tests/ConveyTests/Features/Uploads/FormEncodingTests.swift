import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Form encoding")
struct FormEncodingTests {
    @Test func escapesEveryAwkwardCharacterTheWHATWGWay() {
        #expect(FormEncoding.encode(["q": "a b&c=d+e%f", "é": "日本", "empty": "", "safe": "AZaz09*-._", "tilde~": "~!'()"])
                == "empty=&q=a+b%26c%3Dd%2Be%25f&safe=AZaz09*-._&tilde%7E=%7E%21%27%28%29&%C3%A9=%E6%97%A5%E6%9C%AC")
    }

    @Test func encodesLineBreaksAsTheyAre() {
        #expect(FormEncoding.encode(["text": "a\r\nb\nc"]) == "text=a%0D%0Ab%0Ac")
    }
}
