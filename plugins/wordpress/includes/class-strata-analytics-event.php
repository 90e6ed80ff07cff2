<?php
/**
 * The event the plugin sends for an AI bot's page fetch.
 *
 * @package StrataAnalytics
 */

defined( 'ABSPATH' ) || exit;

/**
 * Builds the ingest request for one bot page fetch (docs/ingest.md).
 *
 * The event is a $pageview carrying the bot's user agent: clients may not
 * send $bot_pageview (ingest refuses it as reserved_event_name); ingest
 * classifies the user agent with the same allowlist and stores the event
 * as $bot_pageview with the bot's name and category. All bot fetches share
 * one distinct id, since a bot has no identity to follow between pages.
 */
final class Strata_Analytics_Event {

	/** The distinct id of every server-captured bot page view. */
	const DISTINCT_ID = '$server_bot';

	/** The most URL or referrer characters ingest takes. */
	const MAX_URL_CHARS = 8192;

	/**
	 * Returns the event for a bot's fetch of a page.
	 *
	 * @param string $user_agent The request's user agent, one Strata_Analytics_Bots::forwardable accepted.
	 * @param string $url        The page's absolute URL.
	 * @param string $referrer   The request's Referer header, or ''.
	 * @param string $uuid       A fresh UUID: ingest stores a uuid once, so a retried request never counts twice.
	 * @return array The event, ready for body().
	 */
	public static function bot_pageview( $user_agent, $url, $referrer, $uuid ) {
		$event = array(
			'uuid'        => $uuid,
			'event_name'  => '$pageview',
			'distinct_id' => self::DISTINCT_ID,
			'user_agent'  => $user_agent,
			'url'         => self::clean_url( $url ),
			'referrer'    => self::clean_url( $referrer ),
			'properties'  => array( '$server_captured' => 'true' ),
		);
		// Fields ingest would refuse are left out rather than losing the event.
		foreach ( array( 'url', 'referrer' ) as $field ) {
			if ( '' === $event[ $field ] ) {
				unset( $event[ $field ] );
			}
		}
		return $event;
	}

	/**
	 * Encodes the request body: the envelope with one event.
	 *
	 * @param array $event An event from bot_pageview().
	 * @return string JSON.
	 */
	public static function body( array $event ) {
		return (string) wp_json_encode( array( 'batch' => array( $event ) ), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
	}

	/**
	 * Returns the arguments of the wp_remote_post that sends an event: not
	 * blocking and with a one-second timeout, so that the page never waits
	 * for Strata, and a Strata that is down costs the page nothing more.
	 *
	 * @param string $api_key The product's API key.
	 * @param array  $event   An event from bot_pageview().
	 * @return array Arguments for wp_remote_post.
	 */
	public static function request_args( $api_key, array $event ) {
		return array(
			'blocking'    => false,
			'timeout'     => 1,
			'redirection' => 0,
			'headers'     => array(
				'Content-Type' => 'application/json',
				'X-API-Key'    => $api_key,
			),
			'body'        => self::body( $event ),
			'user-agent'  => 'strata-analytics-wordpress/' . STRATA_ANALYTICS_VERSION,
		);
	}

	/**
	 * Returns a URL as ingest takes it: valid UTF-8 without NUL and at most
	 * 8,192 characters, else ''.
	 *
	 * @param mixed $url A URL.
	 * @return string The URL, or '' when ingest would refuse it.
	 */
	private static function clean_url( $url ) {
		if ( ! is_string( $url ) || strlen( $url ) > 4 * self::MAX_URL_CHARS ) {
			return '';
		}
		if ( false !== strpos( $url, "\0" ) || 1 !== preg_match( '//u', $url ) ) {
			return '';
		}
		if ( strlen( $url ) > self::MAX_URL_CHARS && preg_match_all( '/./su', $url ) > self::MAX_URL_CHARS ) {
			return '';
		}
		return $url;
	}
}
