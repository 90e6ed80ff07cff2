<?php
/**
 * Loads the plugin's pure classes for PHPUnit, without WordPress: the few
 * WordPress functions they call are stubbed here with the same contracts
 * (options in an array, settings errors recorded for the tests to read).
 * Only unit tests use these stubs; the end-to-end test runs real WordPress.
 *
 * @package StrataAnalytics
 */

define( 'ABSPATH', __DIR__ . '/' );
define( 'STRATA_ANALYTICS_VERSION', '0.3.1' );

/** The stubs' state, reset by each test's setUp. */
final class WP_Stubs {
	/** A well-formed API key for the tests. */
	const KEY = 'st_live_0123456789ABCDEFGHIJabcdefghij01';

	/** @var array<string,mixed> Stored options. */
	public static $options = array();
	/** @var array<int,array{0:string,1:string,2:string}> add_settings_error calls. */
	public static $errors = array();
	/** @var array<string,bool> What the conditional tags answer (is_admin, is_feed…). */
	public static $is = array();
	/** @var array<int,array{0:string,1:array}> wp_remote_post calls. */
	public static $posts = array();
	/** @var array<string,array> Enqueued scripts and their inline code, by handle. */
	public static $scripts = array();
	/** @var bool Whether wp_remote_post throws, as a broken transport might. */
	public static $post_throws = false;

	public static function reset() {
		self::$options     = array();
		self::$errors      = array();
		self::$is          = array();
		self::$posts       = array();
		self::$scripts     = array();
		self::$post_throws = false;
	}

	public static function is( $what ) {
		return ! empty( self::$is[ $what ] );
	}
}

function get_option( $name, $default_value = false ) {
	return array_key_exists( $name, WP_Stubs::$options ) ? WP_Stubs::$options[ $name ] : $default_value;
}

function add_settings_error( $setting, $code, $message, $type = 'error' ) {
	WP_Stubs::$errors[] = array( $setting, $code, $type );
}

function __( $text, $domain = 'default' ) {
	return $text;
}

function wp_parse_url( $url, $component = -1 ) {
	return parse_url( $url, $component );
}

// WordPress's esc_url_raw also drops characters URLs may not hold; the
// sanitiser has rebuilt the URL from parsed parts before it calls this.
function esc_url_raw( $url, $protocols = null ) {
	return $url;
}

function wp_json_encode( $data, $options = 0, $depth = 512 ) {
	return json_encode( $data, $options, $depth );
}

function is_admin() {
	return WP_Stubs::is( 'admin' );
}

function wp_doing_ajax() {
	return WP_Stubs::is( 'ajax' );
}

function wp_doing_cron() {
	return WP_Stubs::is( 'cron' );
}

function is_feed() {
	return WP_Stubs::is( 'feed' );
}

function is_robots() {
	return WP_Stubs::is( 'robots' );
}

function is_trackback() {
	return WP_Stubs::is( 'trackback' );
}

function is_favicon() {
	return WP_Stubs::is( 'favicon' );
}

function home_url( $path = '' ) {
	return 'https://blog.example.com' . $path;
}

function wp_unslash( $value ) {
	return stripslashes( $value );
}

function wp_generate_uuid4() {
	return '6f1c4a52-3b0e-4d7a-9c1e-2f3a4b5c6d7e';
}

function wp_remote_post( $url, $args = array() ) {
	if ( WP_Stubs::$post_throws ) {
		throw new RuntimeException( 'transport failed' );
	}
	WP_Stubs::$posts[] = array( $url, $args );
	return array();
}

function wp_enqueue_script( $handle, $src = '', $deps = array(), $ver = false, $in_footer = false ) {
	WP_Stubs::$scripts[ $handle ] = array(
		'src'    => $src,
		'ver'    => $ver,
		'inline' => array(),
	);
}

function wp_add_inline_script( $handle, $data, $position = 'after' ) {
	WP_Stubs::$scripts[ $handle ]['inline'][] = array( $position, $data );
	return true;
}

require_once dirname( __DIR__, 2 ) . '/includes/class-strata-analytics-bots.php';
require_once dirname( __DIR__, 2 ) . '/includes/class-strata-analytics-event.php';
require_once dirname( __DIR__, 2 ) . '/includes/class-strata-analytics-settings.php';
require_once dirname( __DIR__, 2 ) . '/includes/class-strata-analytics-plugin.php';
require_once dirname( __DIR__, 2 ) . '/bin/generate-bots.php';
