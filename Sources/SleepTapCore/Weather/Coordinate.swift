// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A place on Earth: geodetic latitude and longitude in degrees (WGS 84, as a phone's location
/// service reports them).
///
/// The memberwise values are validated: use `init?(latitude:longitude:)`, and decoding refuses
/// out-of-range or non-finite values.
public struct Coordinate: Codable, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Mean Earth radius R₁ = 6,371,008.8 m (IUGG), used by `distance(to:)`.
    public static let meanEarthRadius: Double = 6_371_008.8

    /// Degrees north, -90...90 (south is negative).
    public var latitude: Double
    /// Degrees east, -180...180 (west is negative).
    public var longitude: Double

    /// A validated coordinate; nil when either value is NaN, infinite or out of range.
    ///
    /// - Parameters:
    ///   - latitude: degrees north, must be finite and in -90...90.
    ///   - longitude: degrees east, must be finite and in -180...180.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, (-90.0...90.0).contains(latitude),
            (-180.0...180.0).contains(longitude)
        else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Great-circle distance to `other` in meters, by the haversine formula on a sphere of radius
    /// `meanEarthRadius` (error against the WGS 84 ellipsoid below 0.5 %).
    ///
    /// - Parameter other: the other place.
    /// - Returns: meters, ≥ 0; symmetric; 0 for the same place.
    public func distance(to other: Coordinate) -> Double {
        let radians = Double.pi / 180
        let phi1 = latitude * radians
        let phi2 = other.latitude * radians
        let dPhi = (other.latitude - latitude) * radians
        let dLambda = (other.longitude - longitude) * radians
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        let c = 2 * atan2(sqrt(min(1, a)), sqrt(max(0, 1 - a)))
        return Self.meanEarthRadius * c
    }

    /// `52.5200,13.4200` (degrees, four decimals).
    public var description: String {
        String(format: "%.4f,%.4f", latitude, longitude)
    }

    private enum CodingKeys: String, CodingKey {
        case latitude
        case longitude
    }

    /// Decodes `{"latitude": …, "longitude": …}` in degrees.
    /// - Throws: `DecodingError.dataCorrupted` when a value is out of range or not finite.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let latitude = try container.decode(Double.self, forKey: .latitude)
        let longitude = try container.decode(Double.self, forKey: .longitude)
        guard let value = Coordinate(latitude: latitude, longitude: longitude) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "coordinate out of range: latitude \(latitude), longitude \(longitude)"))
        }
        self = value
    }

    /// Encodes `{"latitude": …, "longitude": …}` in degrees.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
    }
}
