<?php
/**
 * The AI-bot classifier: the PHP twin of the server's Go classifier
 * (internal/enrich/bots/bots.go), over the same allowlist (includes/bots.php,
 * generated from ai_bots.json).
 *
 * @package StrataAnalytics
 */

defined( 'ABSPATH' ) || exit;

/**
 * Classifies user agents as Strata's ingest does.
 *
 * Matching is by whole product tokens, never loose substrings: the user
 * agent is cut at whitespace (space, tab) and ; ( ) , into products, each
 * loses any /version, and a product matches a bot when it equals the bot's
 * token in ASCII case-insensitive comparison. "GPTBot/1.2" is GPTBot;
 * "NotGPTBot/1.0" and a URL ending in /gptbot are not. The rule works on
 * bytes, as Go's does: every separator is ASCII, and no byte of a multi-byte
 * UTF-8 character is ASCII, so non-ASCII text can neither split nor form a
 * token.
 */
final class Strata_Analytics_Bots {

	/**
	 * How long a product may be and still be looked up. The Go classifier
	 * lower-cases a product into a 64-byte buffer and skips longer ones, so
	 * this copy does too (no token is that long; the limit is there to keep
	 * the rule the same should one ever be).
	 */
	const MAX_PRODUCT_BYTES = 64;

	/**
	 * The most user-agent characters ingest takes (docs/ingest.md, "Steps":
	 * a longer user_agent rejects the event with field_too_long).
	 */
	const MAX_USER_AGENT_CHARS = 2048;

	/**
	 * The allowlist, loaded once per request.
	 *
	 * @var array{min_len:int,max_len:int,bots:array<string,array{0:string,1:string}>}|null
	 */
	private static $table = null;

	/**
	 * Returns the bot whose token is one of the user agent's products.
	 *
	 * @param mixed $user_agent A user agent; anything but a string is no bot.
	 * @return array{name:string,category:string}|null The bot, or null for none.
	 */
	public static function classify( $user_agent ) {
		if ( ! is_string( $user_agent ) || '' === $user_agent ) {
			return null;
		}
		$table = self::table();
		$max   = min( $table['max_len'], self::MAX_PRODUCT_BYTES );
		foreach ( preg_split( '/[ \t;(),]/', $user_agent ) as $product ) {
			$slash = strpos( $product, '/' );
			if ( false !== $slash ) {
				$product = substr( $product, 0, $slash );
			}
			$len = strlen( $product );
			if ( $len < $table['min_len'] || $len > $max ) {
				continue;
			}
			$key = strtr( $product, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz' );
			if ( isset( $table['bots'][ $key ] ) ) {
				return array(
					'name'     => $table['bots'][ $key ][0],
					'category' => $table['bots'][ $key ][1],
				);
			}
		}
		return null;
	}

	/**
	 * Returns the bot a request's user agent names, when ingest will take
	 * that user agent as an event's user_agent field: valid UTF-8, no NUL,
	 * at most 2,048 characters. A user agent ingest would refuse is no bot
	 * to forward, whatever it contains: forwarding it would only earn a
	 * rejection.
	 *
	 * @param mixed $user_agent The request's User-Agent header.
	 * @return array{name:string,category:string}|null The bot, or null.
	 */
	public static function forwardable( $user_agent ) {
		if ( ! is_string( $user_agent ) || '' === $user_agent ) {
			return null;
		}
		// Bytes bound characters from above: a cheap test first, so that a
		// huge header costs no more than its length.
		if ( strlen( $user_agent ) > 4 * self::MAX_USER_AGENT_CHARS ) {
			return null;
		}
		if ( false !== strpos( $user_agent, "\0" ) || 1 !== preg_match( '//u', $user_agent ) ) {
			return null;
		}
		if ( preg_match_all( '/./su', $user_agent ) > self::MAX_USER_AGENT_CHARS ) {
			return null;
		}
		return self::classify( $user_agent );
	}

	/**
	 * Returns every bot of the allowlist, keyed by lower-cased token.
	 *
	 * @return array<string,array{0:string,1:string}>
	 */
	public static function all() {
		return self::table()['bots'];
	}

	/**
	 * Loads includes/bots.php once.
	 *
	 * @return array{min_len:int,max_len:int,bots:array<string,array{0:string,1:string}>}
	 */
	private static function table() {
		if ( null === self::$table ) {
			self::$table = require __DIR__ . '/bots.php';
		}
		return self::$table;
	}
}
