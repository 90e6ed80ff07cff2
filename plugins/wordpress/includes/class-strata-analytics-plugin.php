<?php
/**
 * The plugin's front-end work: the browser SDK on every page, and the
 * server-side report of AI-bot page fetches.
 *
 * @package StrataAnalytics
 */

defined( 'ABSPATH' ) || exit;

/**
 * Wires the front end.
 *
 * People are counted by Strata's browser SDK, which autocaptures $pageview.
 * AI bots run no JavaScript, so for them the site's server sends the page
 * view itself, as a $pageview with the bot's user agent that ingest turns
 * into $bot_pageview. A page served to a bot that is reported this way does
 * not load the SDK, so that a bot that does run scripts is not counted
 * twice.
 */
final class Strata_Analytics_Plugin {

	/** The handle of the SDK's script. */
	const SCRIPT = 'strata-analytics-sdk';

	/**
	 * The bot this request comes from, once looked up: an array, false for
	 * none, null before the lookup.
	 *
	 * @var array|false|null
	 */
	private static $bot = null;

	/** Hooks the front end. */
	public static function register() {
		add_action( 'wp_enqueue_scripts', array( __CLASS__, 'enqueue_sdk' ) );
		// Late, so that canonical redirects (priority 10) and other
		// plugins' early exits happen first: a redirect is no page view.
		add_action( 'template_redirect', array( __CLASS__, 'report_bot' ), 99 );
	}

	/**
	 * Enqueues the SDK from the Strata server and its init call, on
	 * front-end pages of a configured site.
	 */
	public static function enqueue_sdk() {
		if ( is_admin() || ! Strata_Analytics_Settings::configured() ) {
			return;
		}
		if ( Strata_Analytics_Settings::track_bots() && self::request_bot() ) {
			return; // Reported by report_bot().
		}
		wp_enqueue_script( self::SCRIPT, Strata_Analytics_Settings::host() . '/sdk/v1/sdk.min.js', array(), null, false );
		wp_add_inline_script( self::SCRIPT, self::init_script( Strata_Analytics_Settings::api_key() ), 'after' );
	}

	/**
	 * Returns the SDK's init call for a key, safe inside a script element.
	 *
	 * @param string $api_key The product's API key.
	 * @return string JavaScript.
	 */
	public static function init_script( $api_key ) {
		$flags = JSON_HEX_TAG | JSON_HEX_AMP | JSON_HEX_APOS | JSON_HEX_QUOT | JSON_UNESCAPED_SLASHES;
		return 'window.strata && strata.init({ apiKey: ' . wp_json_encode( (string) $api_key, $flags ) . ' });';
	}

	/**
	 * Sends a bot's page fetch to Strata. Never for people, never outside
	 * front-end page requests, and never in a way that could break or
	 * delay the page: the request does not wait for an answer and every
	 * failure is ignored.
	 */
	public static function report_bot() {
		try {
			if ( ! self::is_page_request() || ! Strata_Analytics_Settings::track_bots() || ! Strata_Analytics_Settings::configured() ) {
				return;
			}
			$bot = self::request_bot();
			if ( ! $bot ) {
				return;
			}
			$event = Strata_Analytics_Event::bot_pageview(
				self::server( 'HTTP_USER_AGENT' ),
				self::current_url(),
				self::server( 'HTTP_REFERER' ),
				wp_generate_uuid4()
			);
			wp_remote_post(
				Strata_Analytics_Settings::host() . '/e',
				Strata_Analytics_Event::request_args( Strata_Analytics_Settings::api_key(), $event )
			);
		} catch ( \Throwable $e ) {
			// Analytics must never take the page down with it.
			return;
		}
	}

	/**
	 * Returns the AI bot the request's user agent names, if ingest would
	 * take that user agent.
	 *
	 * @return array|false The bot, or false.
	 */
	private static function request_bot() {
		if ( null === self::$bot ) {
			$bot       = Strata_Analytics_Bots::forwardable( self::server( 'HTTP_USER_AGENT' ) );
			self::$bot = $bot ? $bot : false;
		}
		return self::$bot;
	}

	/**
	 * Whether this is a GET of a front-end page: not the admin, AJAX, cron,
	 * the REST API, XML-RPC or WP-CLI, and not a feed, robots.txt, the
	 * favicon or a trackback, which the SDK never sees either.
	 *
	 * @return bool
	 */
	private static function is_page_request() {
		if ( is_admin() || wp_doing_ajax() || wp_doing_cron() ) {
			return false;
		}
		foreach ( array( 'REST_REQUEST', 'XMLRPC_REQUEST', 'WP_CLI', 'DOING_AUTOSAVE' ) as $constant ) {
			if ( defined( $constant ) && constant( $constant ) ) {
				return false;
			}
		}
		if ( 'GET' !== self::server( 'REQUEST_METHOD' ) ) {
			return false;
		}
		if ( is_feed() || is_robots() || is_trackback() || ( function_exists( 'is_favicon' ) && is_favicon() ) ) {
			return false;
		}
		return true;
	}

	/**
	 * Returns the page's URL: the site's scheme, host and port with the
	 * request's path and query.
	 *
	 * @return string
	 */
	private static function current_url() {
		$home = wp_parse_url( home_url() );
		if ( ! is_array( $home ) || ! isset( $home['scheme'], $home['host'] ) ) {
			return '';
		}
		$url = $home['scheme'] . '://' . $home['host'] . ( isset( $home['port'] ) ? ':' . $home['port'] : '' );
		return $url . self::server( 'REQUEST_URI' );
	}

	/**
	 * Returns a $_SERVER entry as sent, without the slashes WordPress adds
	 * to every request variable, or '' when there is none.
	 *
	 * @param string $name The entry.
	 * @return string
	 */
	private static function server( $name ) {
		// phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- sent as data, never output; the builder checks it.
		return isset( $_SERVER[ $name ] ) && is_string( $_SERVER[ $name ] ) ? wp_unslash( $_SERVER[ $name ] ) : '';
	}
}
